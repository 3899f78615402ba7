// A program that finishes its work, prints its own last line, then returns from main while a thread it
// started still runs: the std::thread is destroyed joinable and C++ calls std::terminate ("terminate called
// without an active exception", SIGABRT), as a process that exits with its process groups' threads alive does.
// Build: g++ -O0 -pthread exit_with_thread.cpp -o exit_with_thread
#include <chrono>
#include <cstdio>
#include <thread>

int main() {
    std::thread background([] { std::this_thread::sleep_for(std::chrono::seconds(60)); });
    std::printf("step 100/100 loss 0.0123\nTraining finished.\n");
    std::fflush(stdout);
    return 0;   // ~thread() on a joinable thread: std::terminate
}
