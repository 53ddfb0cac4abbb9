terraform {
  required_version = ">= 1.9.0"

  # No aws resource of its own: the provider constraints (>= 5.83.0, < 6.0.0)
  # are the modules' it calls (dynamodb-table, alarm-topic, ...).
}
