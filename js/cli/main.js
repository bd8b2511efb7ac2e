#!/usr/bin/env node
/**
 * safetensors-wasm command line. Each command lives in its own js/cli/<name>.js and takes the
 * arguments that follow its name; it returns the exit code: 0 done, 1 a failure (the error is on
 * stderr), 2 a usage mistake (and for inspect, a sharded set shown from its index because some
 * shards could not be read); diff: 0 the same, 1 they differ, 2 a failure or a usage mistake. Output for scripts (--json) is the only thing on stdout; progress
 * bars go to stderr, and only when it is a terminal.
 */
import { readFileSync } from 'node:fs'
import * as inspect from './inspect.js'
import * as stats from './stats.js'
import * as verify from './verify.js'
import * as convert from './convert.js'
import * as diff from './diff.js'
import { COMMON_OPTION_HELP, CONFIG_HELP, describeFailure, optionLines, usageError } from './common.js'
import { SafetensorsError } from '../node.js'
import { escapeInvisible } from '../format.js'
import { redactUrl } from '../redact.js'

/**
 * @typedef {{ usage: string, options: import('./common.js').OptionHelp[], run: (args: string[]) => Promise<number>,
 *   help?: string, failure?: number }} Command
 *   usage: its synopsis and what it does; options: its own, a line each for --help (those of every
 *   command are added); help: what else --help says; failure: the exit code of a failure (default
 *   1; diff's 1 means "they differ")
 */

/** @type {Record<string, Command>} */
const COMMANDS = {
  inspect: { usage: inspect.usage, options: inspect.optionHelp, run: (args) => inspect.main(args, process), help: inspect.help },
  stats: { usage: stats.usage, options: stats.optionHelp, run: (args) => stats.main(args, process) },
  verify: { usage: verify.usage, options: verify.optionHelp, run: (args) => verify.main(args, process), help: verify.help },
  convert: { usage: convert.usage, options: convert.optionHelp, run: (args) => convert.main(args, process), help: convert.help },
  diff: { usage: diff.usage, options: diff.optionHelp, run: (args) => diff.main(args, process), help: diff.help, failure: diff.FAILURE },
}

function usageText() {
  return `usage: safetensors-wasm <command> [options]
       safetensors-wasm <command> --help     the command's options, a line each
       safetensors-wasm --version

commands:
${Object.values(COMMANDS).map((c) => `  ${c.usage}`).join('\n')}

options of every command:
${optionLines(COMMON_OPTION_HELP)}

${CONFIG_HELP}

sources: a path, an http(s) URL, a sharded set's *.index.json, or a Hub address:
  hf://org/repo (its model.safetensors, else model.safetensors.index.json),
  hf://org/repo@revision/path/file.safetensors, hf://datasets/org/repo/...
`
}

/** A command's usage line and its options, a line each (its own, then those of every command). @param {Command} command */
function commandUsage(command) {
  return `usage: safetensors-wasm ${command.usage}\n\noptions:\n${optionLines([...command.options, ...COMMON_OPTION_HELP])}\n`
}

/** The version in the package's package.json. */
function version() {
  return JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version
}

/** The command being run, once known: its failure exit code, its usage for a usage mistake. */
let current = /** @type {Command | null} */ (null)

/** @param {string[]} argv */
async function main(argv) {
  const [name, ...rest] = argv
  if (!name || name === '--help' || name === '-h') {
    process.stdout.write(usageText())
    return 0
  }
  if (name === '--version' || name === '-V') {
    process.stdout.write(`${version()}\n`)
    return 0
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : null
  if (!command) throw usageError(`unknown command ${JSON.stringify(name)}`)
  current = command
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`${commandUsage(command)}${command.help ? `\n${command.help}\n` : ''}`)
    return 0
  }
  return command.run(rest)
}

// A reader that stops reading (`inspect big.safetensors | head`) closes the pipe. The rest of
// the output has nowhere to go, which is no failure of the command: it runs to its end (a convert
// finishes, or removes its temporary file) and exits with its own code.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (/** @type {NodeJS.ErrnoException} */ error) => {
    if (error.code !== 'EPIPE') throw error
    stream.destroy()
  })
}

// Set when the command ends. Node exits when nothing is left to wait on: a command still waiting
// then (on a read that can no longer settle) has not succeeded, whatever exit code was set.
let settled = false
process.on('exit', (code) => {
  if (settled || code !== 0) return
  process.stderr.write('error: the command stopped before it finished: it was waiting on something that can no longer happen (a bug)\n')
  process.exitCode = current?.failure ?? 1
})

main(process.argv.slice(2)).then((code) => {
  settled = true
  process.exitCode = code
}, (error) => {
  settled = true
  if (error instanceof SafetensorsError) {
    // Messages quote names from the file and paths: their invisible characters are shown
    // escaped, newlines too, so that one error is one line and a name cannot forge another.
    process.stderr.write(`error: ${escapeInvisible(describeFailure(error))}\n`)
    process.exitCode = current?.failure ?? 1
  } else if (error && error.usage) {
    // A command's mistake shows that command's usage; an unknown command, the list of commands.
    process.stderr.write(`error: ${redactUrl(error.message)}\n\n${current ? commandUsage(current) : usageText()}`)
    process.exitCode = 2
  } else {
    process.stderr.write(`error: ${redactUrl(String(error?.stack ?? error))}\n`)
    process.exitCode = current?.failure ?? 1
  }
})
