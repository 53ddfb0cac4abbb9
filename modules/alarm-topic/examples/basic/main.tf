provider "aws" {
  region = "eu-west-1"
}

# The alarm topic of an env, encrypted with its own key that only this
# account's dev-hoge-* alarms may use (DDB-SEC-04).
module "alarm_topic" {
  source = "../.."

  name              = "dev-hoge-dynamodb-alarms"
  account_id        = var.account_id
  alarm_name_prefix = "dev-hoge-"
}
