"""The replay program behind `chainrule.compile`: a traced graph turned into a few NumPy instructions.

`Planner` reads the graph once: which nodes vary with the example, which additions fuse into sums (and
which products become a sum's coefficients), each node's level, the groups that run as one instruction,
and the slots of the two stores. The instructions are `Elementwise` (one op for all its nodes at one
level, with the op's array forms from `ops.py`), `MatrixSum` (sums over the same varying inputs: one
matrix product) and `UniformSum` (sums of uniform terms: one bincount). Each has `forward(U, V)` and
`backward(U, V, GU, GV)`; U holds one number per uniform node, V one row of N numbers per varying node.
"""

from __future__ import annotations

import threading
from typing import Any, Sequence

from chainrule.engine import Value, topological_order
from chainrule.kernels import (
    array_sum_of_products,
    array_sum_of_products_pullback,
    array_sum_of_products_pullback_per_example,
)
from chainrule.ops import ADD, MUL, Op, array_pullback_of

__all__ = ["Planner", "Elementwise", "MatrixSum", "UniformSum", "index_of"]


# Each instruction computes a group of nodes into a store: U (one number per uniform node) or V (a
# row of N numbers per varying node). An index is a slice when its slots are consecutive (no copy).


def index_of(np: Any, slots: Sequence[int]) -> Any:
    """The index of these slots of a store: a slice when they are consecutive (a view, no copy)."""
    if len(slots) and list(slots) == list(range(slots[0], slots[0] + len(slots))):
        return slice(slots[0], slots[0] + len(slots))
    return np.asarray(slots, dtype=np.intp)


def _is_unique(slots: Sequence[int]) -> bool:
    return len(set(slots)) == len(slots)


def scratch(np: Any, place: threading.local, shape: tuple[int, ...]) -> Any:
    """An array of this shape for an instruction's working numbers, kept between its calls in this thread
    (as `CompiledFunction` keeps its stores): written whole before it is read, with no new array a call."""
    array = getattr(place, "array", None)
    if array is None or array.shape != shape:
        array = place.array = np.empty(shape)
    return array


# An instruction keeps a reference to the large arrays its last call made (a pullback's results, a rule's
# output before it is copied into the store) until its next call has made new ones. Freed at once, a
# block of megabytes goes back to the system (glibc trims the heap's top), and the next call's array of
# the same size page-faults in again: measured on a 32 x 10,000 tanh layer, its pullback took 2.5 ms
# that way and 0.2 ms with the previous result still held (docs/performance.md, "Compiled replay").
# Only a reference is swapped, so threads sharing an instruction are safe; the cost is memory of the
# size of the arrays one call makes.


class Input:
    """Where one operand of an instruction comes from, and whether it needs its gradient."""

    __slots__ = ("varying", "slots", "index", "unique", "needs_grad", "column", "sole", "first")

    def __init__(self, np: Any, varying: bool, slots: list[int], needs_grad: bool, out_varying: bool) -> None:
        self.varying = varying
        self.slots = slots
        self.sole = False  # set by the Planner: the only reader of its rows, so its gradient is assigned
        self.first = False  # set by the Planner: the backward pass's first writer of its rows (see add_grad)
        self.index = index_of(np, slots)
        self.unique = _is_unique(slots)
        self.needs_grad = needs_grad
        self.column = out_varying and not varying  # a uniform operand broadcast over the examples

    def read(self, U: Any, V: Any) -> Any:
        if self.varying:
            return V[self.index]
        values = U[self.index]
        return values[:, None] if self.column else values

    def add_grad(self, np: Any, GU: Any, GV: Any, contribution: Any) -> None:
        if self.column:
            contribution = contribution.sum(axis=1)
        target = GV if self.varying else GU
        if self.sole:  # the rows' only gradient (still 0 when it is skipped: the store starts at 0)
            target[self.index] = contribution
        elif self.first:  # 0 + the contribution, what adding it to zeroed rows gives, bit for bit (-0.0
            np.add(0.0, contribution, out=target[self.index])  # included), without zeroing them first
        elif self.unique:
            target[self.index] += contribution
        else:
            np.add.at(target, self.index, contribution)

    def add_grad_per_example(self, np: Any, GP: Any, GV: Any, contribution: Any) -> None:
        """As add_grad, but a uniform operand's gradient stays one row of N (GP: per uniform node, one
        number per example) instead of being summed over the examples."""
        if self.varying:
            self.add_grad(np, GP, GV, contribution)
            return
        contribution = np.broadcast_to(contribution, (len(self.slots), GV.shape[1]))
        if self.unique:
            GP[self.index] += contribution
        else:
            np.add.at(GP, self.index, contribution)


# Where an operator's pullback puts each operand's gradient (see `Elementwise.settle`).
INTO, RETURNED, UNWANTED = "written into the gradient store", "returned", "not computed (needs no gradient)"
NOT_IN_PLACE = (RETURNED, RETURNED)


class Elementwise:
    """All nodes of one op at one level: out = op(a[, b]) with the op's array forms."""

    def __init__(self, np: Any, op: Op, out_varying: bool, out_slots: list[int], inputs: list[Input]) -> None:
        self.np = np
        self.forward_rule = op.array_forward or op.forward
        self.pullback = array_pullback_of(op)
        self.varying = out_varying
        self.out = index_of(np, out_slots)
        self.out_slots = out_slots
        self.inputs = inputs
        self.needs_grad = any(i.needs_grad for i in inputs)
        # A rule that takes out= writes straight into the store (one pass less than a copy).
        self.in_place = getattr(self.forward_rule, "takes_out", False) and self.out.__class__ is slice
        self.grad_in_place: Input | None = None  # set by `settle`: a sole operand's gradient written in place
        self.targets: list[str] | None = None  # set by `settle`: where an operator's operands' gradients go
        self.kept: Any = None  # the last call's arrays (see above)

    def settle(self) -> None:
        """Once the Planner knows each operand's readers: a pullback that takes into= writes the gradient
        of a sole varying operand with consecutive rows straight into its rows of the gradient store (one
        pass less than copying a new array in; those rows need no zeroing first). A one-operand pullback
        then writes nothing else; an operator's takes one target per operand: its rows (INTO), None (the
        gradient returned) or False (an operand that needs no gradient: not computed at all)."""
        if not getattr(self.pullback, "writes_into", False):
            return
        places = [self.varying and i.varying and i.sole and i.needs_grad and i.index.__class__ is slice
                  for i in self.inputs]
        if len(self.inputs) == 1 and places[0]:
            self.grad_in_place = self.inputs[0]
        elif len(self.inputs) == 2 and (any(places) or not all(i.needs_grad for i in self.inputs)):
            self.targets = [INTO if place else RETURNED if i.needs_grad else UNWANTED
                            for i, place in zip(self.inputs, places)]

    def forward(self, U: Any, V: Any) -> None:
        store = V if self.varying else U
        if self.in_place:
            self.forward_rule(*[i.read(U, V) for i in self.inputs], out=store[self.out])
        else:
            result = self.forward_rule(*[i.read(U, V) for i in self.inputs])
            store[self.out] = result
            self.kept = result

    def backward(self, U: Any, V: Any, GU: Any, GV: Any) -> None:
        if not self.needs_grad:
            return
        store, grads = (V, GV) if self.varying else (U, GU)
        source = self.grad_in_place
        if source is not None:
            self.pullback(grads[self.out], V[source.index], store[self.out], into=GV[source.index])
            return
        operands = [i.read(U, V) for i in self.inputs]
        if self.targets is None:
            contributions = self.pullback(grads[self.out], *operands, store[self.out])
            targets: Sequence[str] = NOT_IN_PLACE
        else:
            targets = self.targets
            into = [GV[i.index] if target is INTO else None if target is RETURNED else False
                    for i, target in zip(self.inputs, targets)]
            contributions = self.pullback(grads[self.out], *operands, store[self.out], into=into)
        for source, contribution, target in zip(self.inputs, contributions, targets):
            if target is INTO:
                continue  # written in place
            if source.needs_grad and contribution is not None:
                source.add_grad(self.np, GU, GV, contribution)
            elif (source.sole or source.first) and source.needs_grad:
                GV[source.index] = 0.0  # masked: its rows were not zeroed before the pass (see grad_rows_to_zero)
        self.kept = contributions

    def backward_per_example(self, U: Any, V: Any, GP: Any, GV: Any) -> None:
        """The backward pass that keeps the examples apart (see `per_example_backward`)."""
        if not self.needs_grad:
            return
        if self.varying:
            grads, store, operands = GV[self.out], V[self.out], [i.read(U, V) for i in self.inputs]
        else:  # the uniform values as columns, against a gradient of one row of N per node
            grads, store, operands = GP[self.out], U[self.out][:, None], [U[i.index][:, None] for i in self.inputs]
        contributions = self.pullback(grads, *operands, store)
        for source, contribution in zip(self.inputs, contributions):
            if source.needs_grad and contribution is not None:
                source.add_grad_per_example(self.np, GP, GV, contribution)
            elif (source.sole or source.first) and source.needs_grad:
                GV[source.index] = 0.0
        self.kept = contributions


# A sum whose result is smaller than this fraction of a bound on the sum of its terms' sizes (a
# cancellation of about six digits or more), or whose bound exceeds HALF_MAX (an overflow somewhere, in
# some order), is recomputed in the eager order. Any other sum differs from the eager one by at most
# 2 L eps / CANCELLATION = L 2^-32 relative (L terms, eps = 2^-53), whatever order BLAS adds in. A larger
# fraction would recompute many more of an ordinary layer's sums, one by one.
CANCELLATION = 2.0 ** -20
HALF_MAX = 2.0 ** 1023
SHORT_SUMS = 6  # at most this many terms in all: added term by term
BLOCK = 32_768  # numbers of |out| the order check holds at a time (256 KB: in the cache)


class MatrixSum:
    """Sums over the same varying inputs (a layer): out = W @ X + bias, W[j, k] the uniform coefficient
    of input k in sum j (1 for a bare term), bias[j] the sum of sum j's uniform terms.

    The matrix product adds in BLAS's order, with fused multiply-adds; `_eager_order` then recomputes,
    term by term in the order the sum was written, every sum where order can change the result: one
    that is not finite, could overflow, or cancels (see CANCELLATION). `terms[j]` lists sum j's terms in
    that order as (U slot of the coefficient, row of X), row K standing for a uniform term (x 1.0)."""

    def __init__(self, np: Any, out_slots: list[int], inputs: Input, coefficients: list[list[int]],
                 coefficients_need_grad: bool, bias_terms: list[tuple[int, int]], bias_needs_grad: bool,
                 terms: list[list[tuple[int, int]]], negative_zero_slot: int, inputs_nonnegative: bool) -> None:
        self.np = np
        width = max(len(t) for t in terms)  # padded with -0.0, which adds nothing (x + -0.0 == x)
        padded = [t + [(negative_zero_slot, len(coefficients[0]))] * (width - len(t)) for t in terms]
        self.term_coefficients = np.asarray([[c for c, _ in t] for t in padded], dtype=np.intp)
        term_rows = np.asarray([[r for _, r in t] for t in padded], dtype=np.intp)
        self.term_uniform = term_rows == len(coefficients[0])  # a uniform term: its coefficient is the term
        self.term_rows = np.minimum(term_rows, len(coefficients[0]) - 1)  # (any row for a uniform term)
        # A few short sums (an expression's a x + b y) run term by term, in the written order, as cheap
        # as a matrix product and with no order to check.
        self.written = terms if len(terms) * width <= SHORT_SUMS else None
        self.ones_row = len(coefficients[0])
        self.inputs_nonnegative = inputs_nonnegative  # each column made by an op whose results are >= 0
        index = inputs.index
        self.input_slots = list(range(index.start, index.stop)) if index.__class__ is slice else index.tolist()
        self.out = index_of(np, out_slots)
        self.out_slots = out_slots
        self.count = len(out_slots)
        self.inputs = inputs
        self.coefficients = np.asarray(coefficients, dtype=np.intp)
        self.flat_coefficients = self.coefficients.ravel()
        self.coefficients_unique = _is_unique(self.flat_coefficients.tolist())
        self.coefficients_need_grad = coefficients_need_grad
        self.grid: slice | None = None  # set by `settle`
        self.bias_owner = np.asarray([j for j, _ in bias_terms], dtype=np.intp)
        self.bias = Input(np, False, [slot for _, slot in bias_terms], bias_needs_grad, False)
        self.has_bias = bool(bias_terms)
        self.needs_grad = inputs.needs_grad or coefficients_need_grad or (self.has_bias and bias_needs_grad)
        self.sizes_of_out = threading.local()  # per thread: the order check's |out| (see `scratch`)
        self.first_terms: set[tuple[int, int]] = set()  # (sum, term) of short sums: see `_add_to_row`

    def settle(self, u_count: int) -> None:
        """Once the store of uniform nodes has all its slots: when the coefficients' slots form a grid, row
        j at start + j * stride with stride K or K + 1 (a layer's neurons one after another, each its
        weights then its bias), they are read and their gradients added through a view of that block
        rather than a gather and a scatter of J x K slots."""
        count, width = self.coefficients.shape
        start = int(self.coefficients[0, 0])
        for stride in (width, width + 1):
            grid = start + stride * self.np.arange(count)[:, None] + self.np.arange(width)
            if start + stride * count <= u_count and (self.coefficients == grid).all():
                self.grid = slice(start, start + stride * count)
                return

    def _weights(self, store: Any) -> Any:
        """The (J, K) coefficients in a store of uniform nodes (U or GU): a view on a grid, else a copy."""
        if self.grid is None:
            return store[self.coefficients]
        return store[self.grid].reshape(self.count, -1)[:, :self.coefficients.shape[1]]

    def forward(self, U: Any, V: Any) -> None:
        if self.written is not None:
            self._forward_term_by_term(self.written, U, V)
            return
        np = self.np
        in_place = self.out.__class__ is slice  # write straight into the store
        weights, inputs = self._weights(U), V[self.inputs.index]
        out = array_sum_of_products(weights, inputs, V[self.out] if in_place else None)
        sizes = np.abs(weights).sum(axis=1)
        if self.has_bias:
            bias = self.bias.read(U, V)
            out += np.bincount(self.bias_owner, bias, self.count)[:, None]
            bias_sizes = np.bincount(self.bias_owner, np.abs(bias), self.count)
        else:
            bias_sizes = 0.0
        self._eager_order(U, inputs, out, sizes, bias_sizes)
        if not in_place:
            V[self.out] = out

    def _forward_term_by_term(self, written: list[list[tuple[int, int]]], U: Any, V: Any) -> None:
        """Each short sum in its written order, its last addition written straight into its row (no list of
        rows copied in, no gather of the inputs' rows: each is read where it is)."""
        add = self.np.add
        for slot, terms in zip(self.out_slots, written):
            total = None
            for k, (coefficient, row) in enumerate(terms):
                if row == self.ones_row:
                    term = U[coefficient]  # a uniform term
                elif coefficient == 0:
                    term = V[self.input_slots[row]]  # a bare varying term (coefficient 1, no product in eager)
                else:
                    term = U[coefficient] * V[self.input_slots[row]]
                if total is None:
                    total = term
                elif k == len(terms) - 1:
                    total = add(total, term, out=V[slot])  # the sum's last addition, into its row
                    break
                else:
                    total = total + term
            else:
                V[slot] = total  # a sum of one term

    def _backward_term_by_term(
        self, written: list[list[tuple[int, int]]], U: Any, V: Any, GU: Any, GV: Any,
    ) -> None:
        upstream = GV[self.out]
        for j, (g, terms) in enumerate(zip(upstream, written)):
            for k, (coefficient, row) in enumerate(terms):
                if row == self.ones_row:
                    if self.bias.needs_grad:
                        GU[coefficient] += g.sum()
                    continue
                slot = self.input_slots[row]
                if coefficient == 0:
                    if self.inputs.needs_grad:
                        self._add_to_row(GV, slot, g, (j, k))
                    continue
                if self.coefficients_need_grad:
                    GU[coefficient] += g @ V[slot]
                if self.inputs.needs_grad:
                    self._add_to_row(GV, slot, U[coefficient] * g, (j, k))

    def _add_to_row(self, GV: Any, slot: int, value: Any, term: tuple[int, int]) -> None:
        """A short sum's term adds its gradient to its input's row; the row's first writer in the backward
        pass writes 0 + it instead, the same bits, so that the row needs no zeroing first (see
        `Planner._mark_first_writers`)."""
        if term in self.first_terms:
            self.np.add(0.0, value, out=GV[slot])
        else:
            GV[slot] += value

    def _smallest_sizes(self, out: Any) -> Any:
        """min_n |out[j, n]| for each row j (HALF_MAX for an empty row; nan where a row holds a nan), a
        block of rows at a time: |out| goes into a scratch block of about BLOCK numbers that stays in the
        cache, where one (J, N) array of |out| was written and read back from memory (on a 32 x 10,000
        layer, 0.40 against 0.30 ms with the caches cold)."""
        np = self.np
        count, n = out.shape
        step = max(1, BLOCK // max(n, 1))
        block = scratch(np, self.sizes_of_out, (min(step, count), n))
        if step >= count:  # the whole layer in one block
            return np.abs(out, out=block).min(axis=1, initial=HALF_MAX)
        smallest = np.empty(count)
        for start in range(0, count, step):
            stop = min(start + step, count)
            sizes = np.abs(out[start:stop], out=block[:stop - start])
            np.minimum.reduce(sizes, axis=1, initial=HALF_MAX, out=smallest[start:stop])
        return smallest

    def _eager_order(self, U: Any, inputs: Any, out: Any, sizes: Any, bias_sizes: Any) -> None:
        """Recompute in the written order each sum whose order matters: sum j of example n has terms of
        sizes adding up to at most bound = sizes[j] * max_k |x_kn| + bias_sizes[j]."""
        np = self.np
        largest = inputs.max(initial=0.0)  # nan if any input is nan
        if not self.inputs_nonnegative:
            largest = max(largest, -inputs.min(initial=0.0))
        bounds = sizes * largest + bias_sizes
        if bounds.max(initial=0.0) < HALF_MAX:  # nothing can overflow: look for cancellations only
            thresholds = CANCELLATION * bounds  # (a 0 from terms that are all 0 is exact: not suspect)
            # One reduction per row finds the rows to search, without a (J, N) mask. (A reduction over all
            # rows first saved nothing: on a trained 64 x 64 layer most calls have a row to search.)
            suspect = self._smallest_sizes(out) < thresholds
            if not suspect.any():
                return
            rows = suspect.nonzero()[0]
            # Only those rows are searched: a nonzero() over the whole (J, N) mask cost more than the
            # matrix product on a 32 x 10,000 layer.
            row_of, n = np.nonzero(np.abs(out[rows]) < thresholds[rows, None])
            j = rows[row_of]
        else:  # some input is huge, infinite or nan: bound each example on its own
            column_largest = np.maximum(inputs.max(axis=0, initial=0.0), -inputs.min(axis=0, initial=0.0))
            bounds = np.multiply.outer(sizes, column_largest) + np.asarray(bias_sizes)[..., None]
            suspect = ~(np.abs(out) >= CANCELLATION * bounds) | ~(bounds < HALF_MAX)
            j, n = np.nonzero(suspect)
        if not j.size:
            return
        x = inputs[self.term_rows[j], n[:, None]]
        x[self.term_uniform[j]] = 1.0
        products = U[self.term_coefficients[j]] * x
        out[j, n] = np.add.accumulate(products, axis=1)[:, -1]  # left to right, as written

    def backward(self, U: Any, V: Any, GU: Any, GV: Any) -> None:
        if not self.needs_grad:
            return
        if self.written is not None:
            self._backward_term_by_term(self.written, U, V, GU, GV)
            return
        np = self.np
        upstream = GV[self.out]
        weights_grad, inputs_grad = array_sum_of_products_pullback(
            upstream, self._weights(U), V[self.inputs.index],
            GV[self.inputs.index] if self.inputs.sole and self.inputs.index.__class__ is slice else None,
            self.inputs.needs_grad,
        )
        if self.inputs.needs_grad and inputs_grad is not None:
            self.inputs.add_grad(np, GU, GV, inputs_grad)
        if self.coefficients_need_grad:
            if self.grid is not None:
                self._weights(GU)[...] += weights_grad
            elif self.coefficients_unique:
                GU[self.flat_coefficients] += weights_grad.ravel()
            else:
                GU += np.bincount(self.flat_coefficients, weights_grad.ravel(), GU.shape[0])
        if self.has_bias and self.bias.needs_grad:
            self.bias.add_grad(np, GU, GV, upstream.sum(axis=1)[self.bias_owner])

    def backward_per_example(self, U: Any, V: Any, GP: Any, GV: Any) -> None:
        """The backward pass that keeps the examples apart: a weight's gradient for example n is the
        outer product of the upstream gradient and the inputs at n, formed for all n by broadcasting
        rather than summed by a matrix product (see `per_example_backward`)."""
        if not self.needs_grad:
            return
        np = self.np
        upstream = GV[self.out]
        if self.written is not None:
            for j, (g, terms) in enumerate(zip(upstream, self.written)):
                for k, (coefficient, row) in enumerate(terms):
                    if row == self.ones_row:
                        if self.bias.needs_grad:
                            GP[coefficient] += g
                        continue
                    slot = self.input_slots[row]
                    if coefficient != 0 and self.coefficients_need_grad:
                        GP[coefficient] += g * V[slot]
                    if self.inputs.needs_grad:
                        self._add_to_row(GV, slot, g if coefficient == 0 else U[coefficient] * g, (j, k))
            return
        sole = self.inputs.sole and self.inputs.index.__class__ is slice
        weights_grad, inputs_grad = array_sum_of_products_pullback_per_example(
            upstream, self._weights(U), V[self.inputs.index], GV[self.inputs.index] if sole else None,
            self.inputs.needs_grad,
        )
        if self.inputs.needs_grad and inputs_grad is not None:
            self.inputs.add_grad(np, GP, GV, inputs_grad)
        if self.coefficients_need_grad:
            if self.coefficients_unique:
                GP[self.flat_coefficients] += weights_grad
            else:
                np.add.at(GP, self.flat_coefficients, weights_grad)
        self.kept_pullback = weights_grad  # (see above)
        if self.has_bias and self.bias.needs_grad:
            self.bias.add_grad_per_example(np, GP, GV, upstream[self.bias_owner])


class UniformSum:
    """Sums of uniform terms only (an L2 penalty): one bincount per level."""

    def __init__(self, np: Any, out_slots: list[int], terms: list[tuple[int, int]], needs_grad: bool) -> None:
        self.np = np
        self.out = index_of(np, out_slots)
        self.count = len(out_slots)
        self.owner = np.asarray([j for j, _ in terms], dtype=np.intp)
        self.terms = Input(np, False, [slot for _, slot in terms], needs_grad, False)
        self.needs_grad = needs_grad

    def forward(self, U: Any, V: Any) -> None:
        U[self.out] = self.np.bincount(self.owner, self.terms.read(U, V), self.count)

    def backward(self, U: Any, V: Any, GU: Any, GV: Any) -> None:
        if self.needs_grad:
            self.terms.add_grad(self.np, GU, GV, GU[self.out][self.owner])

    def backward_per_example(self, U: Any, V: Any, GP: Any, GV: Any) -> None:
        if self.needs_grad:
            self.terms.add_grad_per_example(self.np, GP, GV, GP[self.out][self.owner])


def _operands(instruction: Any) -> list[Input]:
    if isinstance(instruction, Elementwise):
        return instruction.inputs
    if isinstance(instruction, MatrixSum):
        return [instruction.inputs, instruction.bias]
    return [instruction.terms]


# --- from the traced graph to the program ------------------------------------------------------------


# A fused sum, as `Planner._sum_item` describes it.
SumItem = tuple[Value, list[Value], list[tuple["Value | None", Value]], list[Value], list[tuple[bool, int]]]


def _two_inputs(node: Value) -> tuple[Value, Value]:
    """The inputs of a node of a two-input op (a sum or product the planner fuses)."""
    a, b = node._a, node._b
    if a is None or b is None:
        raise ValueError(f"{node!r} is not made by a two-input op")
    return a, b


class Planner:
    """Reads the traced graph once: which nodes vary, which sums fuse, levels, groups and slots."""

    def __init__(self, np: Any, out: Value, placeholders: list[Value], params: list[Value]) -> None:
        self.np = np
        self.out = out
        order = topological_order(out)
        self.order = order
        placeholder_index = {x: i for i, x in enumerate(placeholders)}
        param_set = set(params)
        self.varying: dict[Value, bool] = {}
        self.needs_grad: dict[Value, bool] = {}
        self.uses: dict[Value, int] = {}
        self.consumer: dict[Value, Value] = {}
        for node in order:
            inputs = node._prev
            if not inputs:
                self.varying[node] = node in placeholder_index
                self.needs_grad[node] = node in param_set
                continue
            self.varying[node] = any(self.varying[c] for c in inputs)
            self.needs_grad[node] = any(self.needs_grad[c] for c in inputs)
            for c in inputs:
                self.uses[c] = self.uses.get(c, 0) + 1
                self.consumer[c] = node
        # Slots: U[0] holds 1.0 (the coefficient of a bare term), U[1] -0.0, then parameters and constants.
        self.u_slots: dict[Value, int] = {}
        self.v_slots: dict[Value, int] = {x: i for i, x in enumerate(placeholders)}
        self.u_values: list[float] = [1.0, -0.0]  # U[1]: the -0.0 that pads a sum's terms
        self.negative_zero_slot = 1
        self.graph_params = [p for p in params if p in self.varying]
        for p in self.graph_params:
            self._new_u_slot(p, 0.0)
        for node in order:
            if not node._prev and node not in placeholder_index and node not in self.u_slots \
                    and node not in self.v_slots:
                self._new_u_slot(node, node.data)  # a constant, fixed at compile time
        self.instructions: list[Any] = []
        self._plan()
        self._mark_sole_readers()

    def _mark_sole_readers(self) -> None:
        """An operand whose rows no other operand reads receives their whole gradient: it can assign it
        instead of adding it (one pass less over the rows, and a matrix product written in place)."""
        readers: dict[int, int] = {}
        operands = [i for instruction in self.instructions for i in _operands(instruction) if i.varying]
        for operand in operands:
            for slot in operand.slots:
                readers[slot] = readers.get(slot, 0) + 1
        for operand in operands:
            operand.sole = operand.unique and all(readers[slot] == 1 for slot in operand.slots)
        for instruction in self.instructions:
            if isinstance(instruction, Elementwise):
                instruction.settle()
            elif isinstance(instruction, MatrixSum) and instruction.written is None:
                instruction.settle(len(self.u_values))
        self._mark_first_writers()

    def _mark_first_writers(self) -> None:
        """An operand that adds its gradient into rows no instruction has written yet in the backward pass
        (instructions in reverse, operands in the order their pullbacks add) writes 0 + its contribution
        there instead (0.0 where masked): the same bits as adding it to zeroed rows, and those rows need no
        zeroing before the pass (on the expression, 11 rows of 10,000: 5 per cent of its step)."""
        written: set[int] = set()
        for instruction in reversed(self.instructions):
            if isinstance(instruction, MatrixSum) and instruction.written is not None:
                if instruction.inputs.needs_grad:  # short sums: term by term, in their order
                    for j, terms in enumerate(instruction.written):
                        for k, (_, row) in enumerate(terms):
                            if row != instruction.ones_row and instruction.input_slots[row] not in written:
                                instruction.first_terms.add((j, k))
                                written.add(instruction.input_slots[row])
                continue
            for operand in _operands(instruction):
                if not (operand.varying and operand.needs_grad):
                    continue
                if not operand.sole and operand.unique and operand.index.__class__ is slice \
                        and written.isdisjoint(operand.slots):
                    operand.first = True
                written.update(operand.slots)

    def grad_rows_to_zero(self) -> Any:
        """The rows of the gradient store a backward pass needs at 0 before it starts: those it reads (an
        instruction's upstream gradient) or adds into, but not those a layer's matrix product or an
        elementwise pullback writes whole (its operand's gradient, the rows' only writer, assigned, written
        in place or set to 0 where masked), which are written before they are read. Zeroing every row cost
        as much as a layer's product; the inputs' rows, never read, are not zeroed either."""
        used: set[int] = set()
        written: set[int] = set()
        for instruction in self.instructions:
            if instruction.needs_grad and not isinstance(instruction, UniformSum) \
                    and (isinstance(instruction, MatrixSum) or instruction.varying):
                used.update(instruction.out_slots)
            for operand in _operands(instruction):
                if operand.varying and operand.needs_grad:
                    used.update(operand.slots)
            if isinstance(instruction, MatrixSum) and instruction.written is None and instruction.inputs.sole \
                    and instruction.inputs.needs_grad and instruction.inputs.index.__class__ is slice:
                written.update(instruction.inputs.slots)
            if isinstance(instruction, Elementwise):
                written.update(slot for i in instruction.inputs if i.sole and i.needs_grad for slot in i.slots)
            written.update(slot for i in _operands(instruction) if i.first for slot in i.slots)
            if isinstance(instruction, MatrixSum) and instruction.written is not None:
                written.update(instruction.input_slots[instruction.written[j][k][1]]
                               for j, k in instruction.first_terms)
        return index_of(self.np, sorted(used - written))

    def _new_u_slot(self, node: Value, value: float) -> int:
        self.u_slots[node] = len(self.u_values)
        self.u_values.append(value)
        return self.u_slots[node]

    def _slot(self, node: Value) -> int:
        return self.v_slots[node] if self.varying[node] else self.u_slots[node]

    # -- fusion --

    def _in_sum(self, node: Value) -> bool:
        """An addition folded into the sum that consumes it: its only use, as the left operand, so that
        the sum is ((t0 + t1) + t2) + ... and its written order is the order of its terms."""
        if node._op is not ADD or node is self.out or self.uses.get(node) != 1:
            return False
        consumer = self.consumer[node]
        return consumer._op is ADD and consumer._a is node

    def _coefficient_term(self, node: Value) -> tuple[Value, Value] | None:
        """(uniform coefficient, varying input) if node is such a product used only by its sum."""
        if node._op is not MUL or self.uses.get(node) != 1:
            return None
        a, b = _two_inputs(node)
        if self.varying[a] and not self.varying[b]:
            return b, a
        if self.varying[b] and not self.varying[a]:
            return a, b
        return None

    def _terms(self, root: Value) -> list[Value]:
        """The terms of the left-deep sum at root, in the order they are added."""
        terms: list[Value] = []
        node = root
        while True:
            a, b = _two_inputs(node)
            terms.append(b)
            if not self._in_sum(a):
                terms.append(a)
                return terms[::-1]
            node = a

    def _plan(self) -> None:
        level: dict[Value, int] = {}
        # Grouped by (kind, depth, ...what a group shares): elementwise ops hold nodes, sums SumItems.
        groups: dict[tuple[Any, ...], list[Any]] = {}
        key: tuple[Any, ...]
        item: Value | SumItem
        for node in self.order:
            if not node._prev:
                level[node] = 0
                continue
            if self._in_sum(node) or (self._coefficient_term(node) and self._in_sum_root(node)):
                continue  # computed inside the sum that consumes it
            if node._op is ADD:
                item = self._sum_item(node)
                depth = 1 + max(level[d] for d in item[1])
                if self.varying[node]:
                    key = ("matrix", depth, tuple(x for _, x in item[2]))
                else:
                    key = ("uniform", depth)
            else:
                item = node
                depth = 1 + max(level[c] for c in node._prev)
                kinds = tuple(self.varying[c] for c in node._prev)
                key = ("op", depth, node._op, kinds)
            level[node] = depth
            groups.setdefault(key, []).append(item)
        for key in sorted(groups, key=lambda k: k[1]):
            kind = key[0]
            if kind == "op":
                self._emit_elementwise(key[2], groups[key])
            elif kind == "uniform":
                self._emit_uniform_sum(groups[key])
            else:
                self._emit_matrix_sum(groups[key])

    def _in_sum_root(self, node: Value) -> bool:
        consumer = self.consumer.get(node)
        return consumer is not None and consumer._op is ADD

    def _sum_item(self, root: Value) -> SumItem:
        """(root, the materialised nodes it reads, [(coefficient or None, varying input)], uniform terms,
        the written order as [(True, index in products) or (False, index in uniform terms)])."""
        products: list[tuple[Value | None, Value]] = []
        uniform: list[Value] = []
        order: list[tuple[bool, int]] = []
        for term in self._terms(root):
            pair = self._coefficient_term(term)
            if pair is None and not self.varying[term]:
                order.append((False, len(uniform)))
                uniform.append(term)
                continue
            order.append((True, len(products)))
            products.append(pair or (None, term))
        reads = [x for pair in products for x in pair if x is not None] + uniform
        return root, reads, products, uniform, order

    def _new_outputs(self, nodes: list[Value]) -> list[int]:
        slots = []
        for node in nodes:
            if self.varying[node]:
                self.v_slots[node] = len(self.v_slots)
                slots.append(self.v_slots[node])
            else:
                slots.append(self._new_u_slot(node, 0.0))
        return slots

    def _emit_elementwise(self, op: Op, nodes: list[Value]) -> None:
        out_varying = self.varying[nodes[0]]
        inputs = []
        for position in range(len(nodes[0]._prev)):
            operands = [n._prev[position] for n in nodes]
            inputs.append(Input(
                self.np, self.varying[operands[0]], [self._slot(x) for x in operands],
                any(self.needs_grad[x] for x in operands), out_varying,
            ))
        self.instructions.append(Elementwise(self.np, op, out_varying, self._new_outputs(nodes), inputs))

    def _emit_uniform_sum(self, items: list[SumItem]) -> None:
        terms = [(j, self.u_slots[t]) for j, item in enumerate(items) for t in item[3]]
        needs_grad = any(self.needs_grad[t] for item in items for t in item[3])
        self.instructions.append(UniformSum(self.np, self._new_outputs([i[0] for i in items]), terms, needs_grad))

    def _emit_matrix_sum(self, items: list[SumItem]) -> None:
        columns = [x for _, x in items[0][2]]
        inputs = Input(self.np, True, [self.v_slots[x] for x in columns],
                        any(self.needs_grad[x] for x in columns), True)
        coefficients = [[0 if c is None else self.u_slots[c] for c, _ in item[2]] for item in items]
        coefficients_need_grad = any(c is not None and self.needs_grad[c] for item in items for c, _ in item[2])
        bias = [(j, self.u_slots[t]) for j, item in enumerate(items) for t in item[3]]
        bias_needs_grad = any(self.needs_grad[t] for item in items for t in item[3])
        terms = [[(row[k], k) if is_product else (self.u_slots[item[3][k]], len(columns))
                  for is_product, k in item[4]] for row, item in zip(coefficients, items)]
        self.instructions.append(MatrixSum(
            self.np, self._new_outputs([i[0] for i in items]), inputs, coefficients,
            coefficients_need_grad, bias, bias_needs_grad, terms, self.negative_zero_slot,
            all(x._op is not None and x._op.nonnegative for x in columns),
        ))
