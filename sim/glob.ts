/** Route patterns of both emulators' fault rules: `*` matches any run of characters, the rest literally. */

/** An anchored RegExp for a glob such as `/linode/instances/{id}/configs*`. */
export function globToRegExp(glob: string): RegExp {
  const escaped = glob.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replaceAll("*", ".*");
  return new RegExp(`^${escaped}$`);
}
