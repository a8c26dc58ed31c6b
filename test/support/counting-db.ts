/**
 * env.DB wrapped to count round trips to the database: each statement run alone (run, all, first,
 * raw) is one, and so is each batch, whatever it holds. Statements prepared through the wrapper and
 * then batched are unwrapped before they reach D1.
 */
export function countingDb(db: D1Database): { db: D1Database; count: () => number; reset: () => void } {
  let trips = 0;
  const targetOf = new WeakMap<object, D1PreparedStatement>();
  const wrap = (statement: D1PreparedStatement): D1PreparedStatement => {
    const proxy = new Proxy(statement, {
      get(target, property) {
        if (property === "bind") return (...values: unknown[]) => wrap(target.bind(...values));
        if (property === "run" || property === "all" || property === "first" || property === "raw") {
          return (...args: unknown[]) => {
            trips++;
            return (target[property] as (...a: unknown[]) => unknown).apply(target, args);
          };
        }
        const value = Reflect.get(target, property, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    targetOf.set(proxy, statement);
    return proxy;
  };
  const proxy = new Proxy(db, {
    get(target, property) {
      if (property === "prepare") return (sql: string) => wrap(target.prepare(sql));
      if (property === "batch") {
        return (statements: D1PreparedStatement[]) => {
          trips++;
          return target.batch(statements.map((s) => targetOf.get(s) ?? s));
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { db: proxy, count: () => trips, reset: () => (trips = 0) };
}
