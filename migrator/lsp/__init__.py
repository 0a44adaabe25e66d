"""``migrate server``: a language server over stdio (on pygls) for editors: diagnostics on open,
change and save from the single-file scan path, code actions from the fixes, and each rule's
explanation on hover. An optional extra (``pip install 'migrate-rocm[lsp]'``)."""
