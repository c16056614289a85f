// The resolve hook of no-lab-load.mjs: the lab's command code and runner are not to be loaded.
const HEAVY = /\/lab\/(?:commands\/cli|run\/runner|topology\/lab|engine\/docker)\.ts$/;

export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  if (HEAVY.test(r.url)) throw new Error(`fleetlab test: the lab was loaded (${r.url.replace(/^.*\/(lab\/)/, "$1")}) for input the settings alone refuse`);
  return r;
}
