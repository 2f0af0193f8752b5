print("reactors-bench: not built yet")
