// A tiny C++ library for ctypes: pm_throw() throws through a noexcept frame -> std::terminate.
// Build: g++ -g -O0 -shared -fPIC pm_terminate.cpp -o libpm_terminate.so
#include <stdexcept>

namespace pm {
[[noreturn]] void validate_batch(int size) {
    throw std::runtime_error("batch size " + std::to_string(size) + " is not divisible by the world size");
}
void run_step(int size) noexcept { validate_batch(size); }
}  // namespace pm

extern "C" void pm_throw(int size) { pm::run_step(size); }
