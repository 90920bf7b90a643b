{
  "targets": [
    {
      "target_name": "mapped",
      "sources": ["mapped.cc"],
      "cflags_cc": ["-O2"]
    },
    {
      "target_name": "kernels",
      "sources": ["kernels.cc"],
      "cflags_cc": ["-O3"]
    }
  ]
}
