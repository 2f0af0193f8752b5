print("http-bench-server: not built yet")
