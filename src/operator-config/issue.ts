/** One problem found in the operator config file. */
export interface OperatorConfigIssue {
  /** Where in the file, e.g. `models[2].pricing.input.usd`; built-in entries read `models[id=…] (built-in default)`. */
  path: string;
  message: string;
}
