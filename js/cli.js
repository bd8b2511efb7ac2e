#!/usr/bin/env node
/**
 * safetensors-wasm command line: inspect <src> [--json]
 */
import { SafetensorsError, open } from './node.js'
import { inspectJson, inspectText } from './cli-inspect.js'

const USAGE = `usage: safetensors-wasm <command> [options]

commands:
  inspect <file|url> [--json]   header summary: sizes, parameters, metadata, tensor table
`

/** @param {string[]} argv */
async function main(argv) {
  const [command, ...rest] = argv
  const flags = new Set(rest.filter((a) => a.startsWith('--')))
  const args = rest.filter((a) => !a.startsWith('--'))
  if (!command || command === '--help' || command === '-h' || flags.has('--help')) {
    process.stdout.write(USAGE)
    return 0
  }
  if (command === 'inspect') {
    if (args.length !== 1) throw usageError('inspect takes one file or URL')
    const f = await open(args[0])
    try {
      if (flags.has('--json')) process.stdout.write(`${JSON.stringify(inspectJson(f), null, 2)}\n`)
      else process.stdout.write(`${inspectText(f, args[0])}\n`)
    } finally {
      await f.close()
    }
    return 0
  }
  throw usageError(`unknown command ${JSON.stringify(command)}`)
}

/** @param {string} message */
function usageError(message) {
  return Object.assign(new Error(`${message}\n\n${USAGE}`), { usage: true })
}

main(process.argv.slice(2)).then((code) => { process.exitCode = code }, (error) => {
  if (error instanceof SafetensorsError) {
    const where = [error.tensor !== null ? `tensor ${JSON.stringify(error.tensor)}` : '', error.offset !== null ? `byte ${error.offset}` : ''].filter(Boolean).join(', ')
    process.stderr.write(`error: ${error.code}${where ? ` (${where})` : ''}: ${error.message}\n`)
    process.exitCode = 1
  } else if (error && error.usage) {
    process.stderr.write(`error: ${error.message}`)
    process.exitCode = 2
  } else {
    process.stderr.write(`error: ${error?.stack ?? error}\n`)
    process.exitCode = 1
  }
})
