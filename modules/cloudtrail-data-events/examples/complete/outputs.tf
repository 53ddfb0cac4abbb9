output "trail_arn" {
  description = "ARN of the trail."
  value       = module.trail.trail_arn
}
