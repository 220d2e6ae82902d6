/** One problem found in the operator config file. */
export interface OperatorConfigIssue {
  /** Where in the file, e.g. `models[2].pricing.input.usd`; built-in entries read `models[id=…] (built-in default)`. */
  path: string;
  message: string;
}

/** `models[2].pricing.input.usd`, `compatibilityMappings.text["gpt-4o"]`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (typeof segment === 'string' && /^[A-Za-z_$][\w$]*$/.test(segment)) out += out ? `.${segment}` : segment;
    else out += `[${JSON.stringify(String(segment))}]`;
  }
  return out;
}
