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
    },
    {
      "target_name": "shared_copy",
      "sources": ["shared-copy.cc"],
      "cflags_cc": ["-O3"]
    }
  ]
}
