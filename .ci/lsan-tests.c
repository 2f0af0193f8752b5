/*
 * Linked into every binary of the AddressSanitizer build (.ci/sanitizers address), nothing else.
 *
 * LeakSanitizer's hook: leak checking at exit is turned off in the test bundle (*.xctest) and stays on
 * in every program the tests start (reactor-server, http-bench-server). In the test bundle, what is
 * left at exit is mostly the tests' own fixtures: effects suspended on test clocks nobody advances
 * again, test responders that keep every stream they opened, Foundation Process objects. The two real
 * leaks it found are checked without it by ServerLifetimeTests. SANITIZERS_TEST_LEAKS=1 turns it on
 * in the test bundle too, to look at them.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int __lsan_is_turned_off(void) {
    const char *wanted = getenv("SANITIZERS_TEST_LEAKS");
    if (wanted != NULL && strcmp(wanted, "1") == 0) return 0;
    char path[4096];
    ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
    if (length <= 0) return 0;
    path[length] = '\0';
    size_t suffix = strlen(".xctest");
    return (size_t)length >= suffix && strcmp(path + length - suffix, ".xctest") == 0;
}
