// simulate.cjs: evaluate IAM requests with @cloud-copilot/iam-simulate (a
// test-only tool, AGPL, installed by scripts/setup.sh into the tool cache and
// never shipped). Reads a JSON array of simulations on stdin; writes a JSON
// array of { overallResult, errors } in the same order.
//
// IAM_SIMULATE_DIR is the folder holding node_modules/@cloud-copilot/iam-simulate.
'use strict'
const { createRequire } = require('module')
const path = require('path')

const dir = process.env.IAM_SIMULATE_DIR
if (!dir) {
  console.error('simulate.cjs: IAM_SIMULATE_DIR is not set (run scripts/setup.sh)')
  process.exit(2)
}
const { runSimulation } = createRequire(path.join(dir, 'package.json'))('@cloud-copilot/iam-simulate')

async function main() {
  let input = ''
  for await (const chunk of process.stdin) input += chunk
  const simulations = JSON.parse(input)
  const out = []
  for (const sim of simulations) {
    const res = await runSimulation(sim, {})
    if (res.resultType === 'error') {
      out.push({ overallResult: '', errors: JSON.stringify(res.errors) })
    } else {
      out.push({ overallResult: res.overallResult })
    }
  }
  process.stdout.write(JSON.stringify(out))
}

main().catch((err) => {
  console.error('simulate.cjs:', err)
  process.exit(1)
})
