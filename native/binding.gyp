{
  "targets": [
    {
      "target_name": "hive_native",
      "sources": ["src/addon.c", "src/spawn.c", "src/fdpass.c", "src/sandbox.c", "src/sandbox-mounts.c", "src/sandbox-kernel.c", "src/sandbox-privileges.c", "src/sock-diag.c"],
      "cflags": ["-Wall", "-Wextra"],
      "cflags_c": ["-std=gnu11", "-Werror=implicit-function-declaration"]
    },
    {
      "target_name": "hive-task-spawner",
      "type": "executable",
      "sources": ["src/spawner.c", "src/spawn.c", "src/fdpass.c", "src/shim-fork.c", "src/shim.c", "src/shim-leader.c", "src/shim-signals.c", "src/shim-status.c", "src/shim-output.c", "src/tree.c", "src/sandbox.c", "src/sandbox-mounts.c", "src/sandbox-kernel.c", "src/sandbox-privileges.c", "src/vfork-into.c", "src/exec-policy.c", "src/exec-notify.c", "src/exec-resolve.c", "src/exec-rules.c", "src/exec-text.c", "src/exec-identity.c", "src/exec-views.c", "src/exec-unwrap.c", "src/exec-mask.c", "src/sha256.c"],
      "cflags": ["-std=gnu11", "-Wall", "-Wextra", "-Werror=implicit-function-declaration"]
    },
    {
      "target_name": "hive-task-init",
      "type": "executable",
      "sources": ["src/task-init.c", "src/task-mounts.c", "src/userns-map.c", "src/sandbox-probe.c", "src/sandbox.c", "src/sandbox-mounts.c", "src/sandbox-kernel.c", "src/sandbox-privileges.c"],
      "cflags": ["-std=gnu11", "-Wall", "-Wextra", "-Werror=implicit-function-declaration"]
    },
    {
      "target_name": "hive-daemon-init",
      "type": "executable",
      "sources": ["src/daemon-init.c"],
      "cflags": ["-std=gnu11", "-Wall", "-Wextra", "-Werror=implicit-function-declaration"]
    },
    {
      "target_name": "hive-task-shim",
      "type": "executable",
      "sources": ["src/shim-main.c", "src/shim.c", "src/shim-leader.c", "src/shim-signals.c", "src/shim-status.c", "src/shim-output.c", "src/tree.c", "src/sandbox.c", "src/sandbox-mounts.c", "src/sandbox-kernel.c", "src/sandbox-privileges.c", "src/vfork-into.c", "src/exec-policy.c", "src/exec-notify.c", "src/exec-resolve.c", "src/exec-rules.c", "src/exec-text.c", "src/exec-identity.c", "src/exec-views.c", "src/exec-unwrap.c", "src/exec-mask.c", "src/sha256.c"],
      "cflags": ["-std=gnu11", "-Wall", "-Wextra", "-Werror=implicit-function-declaration"]
    }
  ]
}
