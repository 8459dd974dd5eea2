/**
 * One headline figure of a benchmark, printed as a line of its own (`FIGURE {json}`) so that
 * `bench:all` (all.bench.ts) can gather it from the benchmark's output into its table.
 */
export interface Figure {
  /** The benchmark's name, as in `bench:<name>`. */
  benchmark: string;
  /** What the value is, with its unit. */
  figure: string;
  value: number;
  /** The same figure of the baseline measured in the same run, when there is one. */
  baseline?: number;
  /** The goal, as text (`<= 5`, `>= 1.3 x`). */
  goal?: string;
  met?: boolean;
}

export const FIGURE_PREFIX = 'FIGURE ';

export function printFigure(figure: Figure): void {
  console.log(FIGURE_PREFIX + JSON.stringify(figure));
}
