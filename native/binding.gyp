{
  "targets": [
    {
      "target_name": "hive_native",
      "sources": ["src/addon.c", "src/spawn.c"],
      "cflags": ["-std=gnu11", "-Wall", "-Wextra", "-Werror=implicit-function-declaration"]
    },
    {
      "target_name": "hive-task-shim",
      "type": "executable",
      "sources": ["src/shim.c", "src/tree.c"],
      "cflags": ["-std=gnu11", "-Wall", "-Wextra", "-Werror=implicit-function-declaration"]
    }
  ]
}
