print("geotrigger: not built yet")
