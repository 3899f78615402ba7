/* assert() fails: SIGABRT from __assert_fail. Build: gcc -g -O0 pm_assert.c -o pm_assert */
#include <assert.h>
#include <stdio.h>

static int check_shape(int rows) { assert(rows % 8 == 0 && "rows must be a multiple of 8"); return rows; }

int main(void) {
    printf("READY\n");
    fflush(stdout);
    return check_shape(13) == 0;
}
