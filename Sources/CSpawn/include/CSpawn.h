#ifndef CSPAWN_H
#define CSPAWN_H

#include <sys/types.h>

/// Starts `path` with `argv` and `envp` (NULL-terminated) through glibc's
/// posix_spawn: `in`, `out` and `err` become the child's descriptors 0, 1
/// and 2 (-1: /dev/null), every other descriptor is closed in the child
/// (closefrom, whoever opened it and when), the child gets a process group
/// of its own, an empty signal mask and every signal at its default, and
/// `dir` (NULL: the parent's) as its working directory.
/// Returns 0 and sets `*pid`, or an errno value.
int cspawn(pid_t *pid, const char *path, char *const argv[], char *const envp[], int in, int out, int err,
           const char *dir);

/// pipe2(fds, O_CLOEXEC): a pipe whose ends a spawned child gets only as its
/// 0, 1 or 2. Returns 0, or -1 with errno set.
int cspawn_pipe(int fds[2]);

#endif
