/** Keyword snippets (LSP snippet syntax: `${1:name}` placeholders, `$0` final cursor). */

export interface Snippet {
  label: string;
  insert_text: string;
  detail: string;
}

export const SNIPPETS: readonly Snippet[] = [
  { label: "async", insert_text: "async (${1:args}) => {\n\t$0\n}", detail: "async arrow function" },
  { label: "await", insert_text: "await ${0}", detail: "await expression" },
  {
    label: "class",
    insert_text: "class ${1:Name} {\n\tconstructor(${2}) {\n\t\t$0\n\t}\n}",
    detail: "class declaration",
  },
  { label: "const", insert_text: "const ${1:name} = ${0};", detail: "const declaration" },
  { label: "else", insert_text: "else {\n\t$0\n}", detail: "else block" },
  { label: "export", insert_text: "export ${0}", detail: "export" },
  { label: "for", insert_text: "for (let ${1:i} = 0; ${1:i} < ${2:length}; ${1:i}++) {\n\t$0\n}", detail: "for loop" },
  { label: "for-of", insert_text: "for (const ${1:item} of ${2:items}) {\n\t$0\n}", detail: "for…of loop" },
  { label: "function", insert_text: "function ${1:name}(${2}) {\n\t$0\n}", detail: "function declaration" },
  { label: "if", insert_text: "if (${1:condition}) {\n\t$0\n}", detail: "if statement" },
  { label: "import", insert_text: 'import { ${2} } from "${1:module}";', detail: "import declaration" },
  { label: "interface", insert_text: "interface ${1:Name} {\n\t$0\n}", detail: "interface declaration" },
  { label: "let", insert_text: "let ${1:name} = ${0};", detail: "let declaration" },
  { label: "new", insert_text: "new ${1:Class}(${0})", detail: "new expression" },
  { label: "return", insert_text: "return ${0};", detail: "return statement" },
  {
    label: "switch",
    insert_text: "switch (${1:value}) {\n\tcase ${2:x}:\n\t\t$0\n\t\tbreak;\n}",
    detail: "switch statement",
  },
  { label: "throw", insert_text: "throw new Error(${0});", detail: "throw statement" },
  { label: "try", insert_text: "try {\n\t$0\n} catch (err) {\n\t\n}", detail: "try/catch" },
  { label: "type", insert_text: "type ${1:Name} = ${0};", detail: "type alias" },
  { label: "while", insert_text: "while (${1:condition}) {\n\t$0\n}", detail: "while loop" },
];

/** Globals worth offering by name (a small, fixed list: no type information here). */
export const GLOBALS: readonly string[] = [
  "Array",
  "Boolean",
  "Date",
  "Error",
  "JSON",
  "Map",
  "Math",
  "Number",
  "Object",
  "Promise",
  "RegExp",
  "Set",
  "String",
  "Symbol",
  "console",
  "process",
  "setTimeout",
  "clearTimeout",
  "structuredClone",
  "undefined",
];
