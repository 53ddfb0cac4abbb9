output "trail_arn" {
  description = "ARN of the trail."
  value       = aws_cloudtrail.this.arn
}

output "bucket_name" {
  description = "Bucket holding the trail's log files."
  value       = aws_s3_bucket.trail.id
}
