// Errors as a person can act on them: the core's messages name the file, line and field; a
// form adds which of its fields the file came from, and the operating system's wording
// ("No such file or directory (os error 2)") becomes what to do about it.

/** One field of a form: its label as shown and the path or value typed into it. */
export interface FieldValue { label: string; value: string }

const SYSTEM_WORDS: [RegExp, string][] = [
  [/:?\s*No such file or directory \(os error 2\)/g, ": not found: check the path or choose it with Browse…"],
  [/:?\s*Permission denied \(os error 13\)/g, ": not readable (permission denied): choose a file you may read"],
  [/:?\s*Is a directory \(os error 21\)/g, ": is a folder: choose a file"],
  [/:?\s*Not a directory \(os error 20\)/g, ": is a file: choose a folder"],
];

/** `message` with the field whose value it names put first ("Answers file (JSONL): …"), and
 *  system error wording replaced. A message that names no field is kept as it is. */
export function explainError(message: string, fields: FieldValue[] = []): string {
  let text = message;
  for (const [pattern, words] of SYSTEM_WORDS) text = text.replace(pattern, words);
  // The longest value first: a dataset folder is a prefix of the answers file inside it.
  const named = [...fields]
    .filter((f) => f.value.trim() !== "")
    .sort((a, b) => b.value.trim().length - a.value.trim().length)
    .find((f) => text.includes(f.value.trim()));
  return named && !text.startsWith(`${named.label}:`) ? `${named.label}: ${text}` : text;
}

/** "Dataset folder: choose one (Browse…) or pick a dataset under Datasets." for the first
 *  required field left empty; null when all are filled. */
export function missingField(fields: FieldValue[], hint = "choose it with Browse…"): string | null {
  const empty = fields.find((f) => f.value.trim() === "");
  return empty ? `${empty.label}: empty; ${hint}` : null;
}
