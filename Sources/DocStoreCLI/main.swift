print("docstore: under construction")
