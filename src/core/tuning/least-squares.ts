/**
 * The small linear algebra both model fits use: least squares through the normal equations
 * (2 to 4 unknowns: an ambient, a gain, a free initial term), and the jackknife's standard error.
 */

/** Least squares: the coefficients minimising Σ(values − rows·c)², NaN when singular. */
export function leastSquares(rows: readonly number[][], values: readonly number[]): number[] {
  const n = rows[0]?.length ?? 0;
  const augmented = Array.from({ length: n }, () => new Array<number>(n + 1).fill(0));
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]!;
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) augmented[i]![j]! += row[i]! * row[j]!;
      augmented[i]![n]! += row[i]! * values[r]!;
    }
  }
  return solveNormal(augmented);
}

/** Solves normal equations [XᵀX | Xᵀy] by Gauss–Jordan elimination with partial pivoting. */
export function solveNormal(augmented: readonly number[][]): number[] {
  const n = augmented.length;
  const a = augmented.map((r) => [...r]);
  for (let col = 0; col < n; col++) {
    let pivot = col;
    for (let r = col + 1; r < n; r++) if (Math.abs(a[r]![col]!) > Math.abs(a[pivot]![col]!)) pivot = r;
    [a[col], a[pivot]] = [a[pivot]!, a[col]!];
    const p = a[col]![col]!;
    if (Math.abs(p) < 1e-300) return new Array<number>(n).fill(Number.NaN);
    for (let r = 0; r < n; r++) {
      if (r === col) continue;
      const factor = a[r]![col]! / p;
      for (let c = col; c <= n; c++) a[r]![c]! -= factor * a[col]![c]!;
    }
  }
  return a.map((row, i) => row[n]! / row[i]!);
}

/** The jackknife standard error of leave-one-out estimates; NaN with fewer than 2. */
export function jackknifeError(estimates: readonly number[]): number {
  const n = estimates.length;
  if (n < 2) return Number.NaN;
  const mean = estimates.reduce((s, v) => s + v, 0) / n;
  const sumSquares = estimates.reduce((s, v) => s + (v - mean) ** 2, 0);
  return Math.sqrt(((n - 1) / n) * sumSquares);
}
