{
  "targets": [
    {
      "target_name": "mapped",
      "sources": ["mapped.cc"],
      "cflags_cc": ["-O2"]
    }
  ]
}
