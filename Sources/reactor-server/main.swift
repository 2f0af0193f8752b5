print("reactor-server: not built yet")
