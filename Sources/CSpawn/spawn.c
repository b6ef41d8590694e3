// The one way RoomdTesting starts processes. Foundation's Process.run (Swift
// 6.3.1) reads /proc/self/fd with a 256-byte copy of each dirent and faults
// now and then when the test process holds many descriptors
// (swift-corelibs-foundation #5472, fixed after 6.3.1); it also closes only
// the descriptors open when it lists them, so another thread's new pipe
// leaked into the child. posix_spawn with closefrom has neither problem.
#define _GNU_SOURCE
#include "CSpawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stddef.h>
#include <unistd.h>

int cspawn(pid_t *pid, const char *path, char *const argv[], char *const envp[], int in, int out, int err,
           const char *dir) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int result = posix_spawn_file_actions_init(&actions);
    if (result != 0) return result;
    result = posix_spawnattr_init(&attributes);
    if (result != 0) {
        posix_spawn_file_actions_destroy(&actions);
        return result;
    }
    const int sources[3] = {in, out, err};
    for (int target = 0; target < 3 && result == 0; target++) {
        result = sources[target] < 0
            ? posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            : posix_spawn_file_actions_adddup2(&actions, sources[target], target);
    }
    if (result == 0) result = posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    if (result == 0 && dir != NULL) result = posix_spawn_file_actions_addchdir_np(&actions, dir);
    sigset_t empty, all;
    sigemptyset(&empty);
    sigfillset(&all);
    if (result == 0) result = posix_spawnattr_setsigmask(&attributes, &empty);
    if (result == 0) result = posix_spawnattr_setsigdefault(&attributes, &all);
    if (result == 0) result = posix_spawnattr_setpgroup(&attributes, 0);
    if (result == 0) {
        result = posix_spawnattr_setflags(
            &attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
    }
    if (result == 0) result = posix_spawn(pid, path, &actions, &attributes, argv, envp);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    return result;
}

int cspawn_pipe(int fds[2]) { return pipe2(fds, O_CLOEXEC); }
