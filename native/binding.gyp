{
  "targets": [
    {
      "target_name": "fd_flags",
      "sources": ["fd-flags.c"],
      "cflags": ["-Wall", "-Wextra", "-O2"]
    }
  ]
}
