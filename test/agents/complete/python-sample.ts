/** The Python buffer and request of the agent-complete suites (python.test.ts in-process, main.test.ts served). */

export const PY_SOURCE = `import os
from typing import Any

LIMIT = 3


class Store:
    def __init__(self, root: str) -> None:
        self.root = root

    def path(self, name: str) -> str:
        full = os.path.join(self.root, name)
        return full
`;
export const PY_CURSOR = { line: 12, column: 8 };

export function pythonRequest(constraints: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    action: "complete",
    context: { file_path: "store.py", source_code: PY_SOURCE, cursor: PY_CURSOR },
    constraints: { timeout_ms: 30_000, max_tokens: 8, inference_timeout_ms: 20_000, ...constraints },
  };
}
