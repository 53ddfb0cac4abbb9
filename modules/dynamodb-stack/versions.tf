terraform {
  required_version = ">= 1.9.0"

  # No resource of its own uses the aws provider yet; the child modules
  # declare theirs (>= 5.83.0).
}
