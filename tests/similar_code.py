"""Learners' solutions of forward-any-order for the similar-code tests: four written independently, two
near-copies of them (names changed, comments changed, functions reordered), and the starter left as given.

    SOLUTIONS["kahn"], COPIES["kahn-renamed"], ...
"""

from __future__ import annotations

from chainrule import lessons
from chainrule.grading import starter_source

EXERCISE = "forward-any-order"
# The starter's helper, which learners keep as given (the starter's own code: boilerplate to the detector).
STARTER_HELPER = '''

def apply(op, x, y):
    if op == "add":
        return x + y
    if op == "mul":
        return x * y
    return math.tanh(x)
'''

STACK = '''import math
''' + STARTER_HELPER + '''

def forward_any_order(nodes, leaves):
    first_node = len(leaves)
    values = [float(x) for x in leaves] + [None] * len(nodes)
    for position in range(first_node, len(values)):
        pending = [position]
        while pending:
            top = pending[-1]
            op, a, b = nodes[top - first_node]
            missing = [i for i in (a, b) if i is not None and values[i] is None]
            if missing:
                pending.extend(missing)
                continue
            pending.pop()
            if values[top] is None:
                values[top] = apply(op, values[a], None if b is None else values[b])
    return values
'''

KAHN = '''import math
from collections import deque
''' + STARTER_HELPER + '''

def forward_any_order(nodes, leaves):
    start = len(leaves)
    users = {}
    needs = []
    for i, (op, a, b) in enumerate(nodes):
        inputs = [p for p in (a, b) if p is not None and p >= start]
        needs.append(len(inputs))
        for p in inputs:
            users.setdefault(p - start, []).append(i)
    ready = deque(i for i, n in enumerate(needs) if n == 0)
    out = list(leaves) + [0.0] * len(nodes)
    while ready:
        i = ready.popleft()
        op, a, b = nodes[i]
        out[start + i] = apply(op, out[a], None if b is None else out[b])
        for user in users.get(i, []):
            needs[user] -= 1
            if needs[user] == 0:
                ready.append(user)
    return out
'''

RECURSIVE = '''import math
''' + STARTER_HELPER + '''

def forward_any_order(nodes, leaves):
    memo = dict(enumerate(leaves))

    def value(k):
        if k not in memo:
            kind, left, right = nodes[k - len(leaves)]
            memo[k] = apply(kind, value(left), value(right) if right is not None else None)
        return memo[k]

    return [value(k) for k in range(len(leaves) + len(nodes))]
'''

PASSES = '''import math
''' + STARTER_HELPER + '''

def forward_any_order(nodes, leaves):
    n = len(leaves)
    vals = list(leaves) + [None] * len(nodes)
    done = False
    while not done:
        done = True
        for j, node in enumerate(nodes):
            if vals[n + j] is not None:
                continue
            kind, u, w = node
            if vals[u] is None or (w is not None and vals[w] is None):
                done = False
                continue
            vals[n + j] = apply(kind, vals[u], vals[w] if w is not None else None)
    return vals
'''

# Kahn's solution with every name changed and comments added: the same code to a winnowing detector.
KAHN_RENAMED = '''import math
from collections import deque
''' + STARTER_HELPER + '''

def forward_any_order(nodes, leaves):
    # where the nodes begin
    offset = len(leaves)
    consumers = {}
    waiting_on = []
    for k, (kind, left, right) in enumerate(nodes):
        deps = [q for q in (left, right) if q is not None and q >= offset]
        waiting_on.append(len(deps))  # how many inputs are not ready
        for q in deps:
            consumers.setdefault(q - offset, []).append(k)
    queue = deque(k for k, count in enumerate(waiting_on) if count == 0)
    result = list(leaves) + [0.0] * len(nodes)
    while queue:
        k = queue.popleft()
        kind, left, right = nodes[k]
        result[offset + k] = apply(kind, result[left], None if right is None else result[right])
        for c in consumers.get(k, []):
            waiting_on[c] -= 1
            if waiting_on[c] == 0:
                queue.append(c)
    return result
'''

# The stack solution with its helper moved below, a docstring and comments of its own, a name or two changed.
STACK_REORDERED = '''import math


def forward_any_order(nodes, leaves):
    """Compute each node once its inputs are known."""
    first = len(leaves)
    values = [float(x) for x in leaves] + [None] * len(nodes)
    for position in range(first, len(values)):
        todo = [position]  # a stack of nodes to finish
        while todo:
            top = todo[-1]
            op, a, b = nodes[top - first]
            missing = [i for i in (a, b) if i is not None and values[i] is None]
            if missing:
                todo.extend(missing)
                continue
            todo.pop()
            if values[top] is None:
                values[top] = apply(op, values[a], None if b is None else values[b])
    return values


def apply(op, x, y):
    # the three operations of the graph
    if op == "add":
        return x + y
    if op == "mul":
        return x * y
    return math.tanh(x)
'''

SOLUTIONS = {"stack": STACK, "kahn": KAHN, "recursive": RECURSIVE, "passes": PASSES}
COPIES = {"kahn-renamed": KAHN_RENAMED, "stack-reordered": STACK_REORDERED}


def starter() -> str:
    lessons.register_exercises()
    return starter_source(EXERCISE, "python")
