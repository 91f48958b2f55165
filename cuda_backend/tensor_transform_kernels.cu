// Placeholder: filled in by the kernels of its family.
