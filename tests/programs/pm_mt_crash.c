/* A multi-threaded C program: a named worker thread writes through NULL while main joins it
 * and an idle named thread sleeps. Build: gcc -g -O0 -pthread pm_mt_crash.c -o pm_mt_crash */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static void store_result(int *slot) { *slot = 42; }

static void *crasher(void *arg) {
    pthread_setname_np(pthread_self(), "pm_crasher");
    usleep(50000);
    store_result((int *)arg);
    return NULL;
}

static void *idler(void *arg) {
    (void)arg;
    pthread_setname_np(pthread_self(), "pm_idle");
    for (;;) pause();
    return NULL;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&b, NULL, idler, NULL);
    pthread_create(&a, NULL, crasher, NULL);
    printf("READY\n");
    fflush(stdout);
    pthread_join(a, NULL);
    return 0;
}
