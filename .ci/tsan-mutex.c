/*
 * Linked into every binary of the ThreadSanitizer build (.ci/sanitizers thread), nothing else.
 *
 * Synchronization.Mutex locks and unlocks with an atomic compare-and-exchange inlined into our code,
 * which ThreadSanitizer sees, and falls back to the futex slow paths in libswiftSynchronization.so
 * when the lock is contended, which it does not see (the kernel hands the lock over; the library is
 * not instrumented). Every access under a Mutex that was contended once would be reported as a race.
 * These definitions take the place of the library's slow paths in the executable: each calls the
 * library's own function and tells ThreadSanitizer what it did (acquired or released the lock word),
 * so only real races remain.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

void __tsan_acquire(void *address);
void __tsan_release(void *address);

#define SWIFT __attribute__((swiftcall))
#define SELF __attribute__((swift_context))

typedef SWIFT void (*LockSlow)(uint32_t, void *SELF);
typedef SWIFT bool (*TryLockSlow)(void *SELF);
typedef SWIFT void (*UnlockSlow)(void *SELF);

#define LOCK_SLOW "$s15Synchronization12_MutexHandleV9_lockSlowyys6UInt32VF"
#define TRY_LOCK_SLOW "$s15Synchronization12_MutexHandleV12_tryLockSlowSbyF"
#define UNLOCK_SLOW "$s15Synchronization12_MutexHandleV11_unlockSlowyyF"

static void *lock_slow_, *try_lock_slow_, *unlock_slow_;

/* The library's function `name`, looked up once into `cache`; a missing one stops the program. */
static void *resolved(void **cache, const char *name) {
    void *function = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (function != NULL) return function;
    function = dlsym(RTLD_NEXT, name);
    if (function == NULL) {
        fprintf(stderr, "tsan-mutex: %s not found in libswiftSynchronization.so: %s\n", name, dlerror());
        abort();
    }
    __atomic_store_n(cache, function, __ATOMIC_RELEASE);
    return function;
}

SWIFT void lock_slow(uint32_t thread, void *SELF handle) __asm__(LOCK_SLOW);
SWIFT void lock_slow(uint32_t thread, void *SELF handle) {
    LockSlow real = (LockSlow)resolved(&lock_slow_, LOCK_SLOW);
    real(thread, handle);
    __tsan_acquire(handle);
}

SWIFT bool try_lock_slow(void *SELF handle) __asm__(TRY_LOCK_SLOW);
SWIFT bool try_lock_slow(void *SELF handle) {
    TryLockSlow real = (TryLockSlow)resolved(&try_lock_slow_, TRY_LOCK_SLOW);
    bool locked = real(handle);
    if (locked) __tsan_acquire(handle);
    return locked;
}

SWIFT void unlock_slow(void *SELF handle) __asm__(UNLOCK_SLOW);
SWIFT void unlock_slow(void *SELF handle) {
    UnlockSlow real = (UnlockSlow)resolved(&unlock_slow_, UNLOCK_SLOW);
    __tsan_release(handle);
    real(handle);
}
