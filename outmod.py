value = 3
