/** recgw's command-line parsing: strict, every refusal a UsageError naming the command. */
import t from 'tap';
import { parseCommandArgs } from '../../../src/cli/args.js';

const OPTIONS = {
  json: { type: 'boolean' },
  lists: { type: 'boolean' },
  'page-size': { type: 'string' },
} as const;

void t.test('options and arguments in any order, values spaced or after =', (t) => {
  const args = parseCommandArgs('purge', ['acme', '--page-size=30', '--json', 'rec'], OPTIONS);
  t.equal(args.command, 'purge');
  t.same(args.positional, ['acme', 'rec']);
  t.same([...args.values], [['page-size', '30']]);
  t.same([...args.switches], ['json']);
  t.same(
    [...parseCommandArgs('purge', ['--page-size', '5'], OPTIONS).values],
    [['page-size', '5']],
  );
  t.end();
});

void t.test('refused with a clear message', (t) => {
  const cases: [string[], RegExp][] = [
    [['acme', '--force'], /^purge: Unknown option '--force'$/],
    // A short option used to pass as an argument (a recording named "-f").
    [['acme', '-f'], /^purge: Unknown option '-f'$/],
    [['acme', '--page-size'], /^purge: Option '--page-size <value>' argument missing$/],
    [['--page-size', '--json'], /^purge: Option '--page-size' argument is ambiguous$/],
    [['--page-size='], /^purge: option '--page-size' needs a value$/],
    [['--json=yes'], /^purge: Option '--json' does not take an argument$/],
  ];
  for (const [argv, message] of cases) {
    t.throws(() => parseCommandArgs('purge', argv, OPTIONS), { name: 'UsageError', message });
  }
  t.end();
});
