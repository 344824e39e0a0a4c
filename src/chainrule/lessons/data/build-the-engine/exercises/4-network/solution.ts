// chainrule exercise: engine-network
// Build the engine, step 4 of 5: A neuron, a layer and a network (MLP) made of your own Values.
// It starts from step 3's code; keep it, and add what this step asks for.

export class Value {
  // One number in a computation, with the gradient of the final result with respect to it.
  data: number;
  grad: number;
  _prev: Value[];
  _op: string;
  _backward: () => void;

  constructor(data: number, children: Value[] = [], op = "") {
    this.data = data;
    this.grad = 0;
    this._prev = children; // the Values this one was computed from
    this._op = op;
    this._backward = () => {}; // sends this Value's grad on to its inputs (a leaf has none)
  }

  static lift(x: Value | number): Value {
    return x instanceof Value ? x : new Value(x);
  }

  add(x: Value | number): Value {
    const other = Value.lift(x);
    const out = new Value(this.data + other.data, [this, other], "+");
    out._backward = () => {
      // d(a + b)/da = 1 and d(a + b)/db = 1; += because a value may be used more than once
      this.grad += out.grad;
      other.grad += out.grad;
    };
    return out;
  }

  mul(x: Value | number): Value {
    const other = Value.lift(x);
    const out = new Value(this.data * other.data, [this, other], "*");
    out._backward = () => {
      // d(a * b)/da = b and d(a * b)/db = a
      this.grad += other.data * out.grad;
      other.grad += this.data * out.grad;
    };
    return out;
  }

  tanh(): Value {
    const t = Math.tanh(this.data);
    const out = new Value(t, [this], "tanh");
    out._backward = () => {
      this.grad += (1 - t * t) * out.grad;
    };
    return out;
  }

  exp(): Value {
    const e = Math.exp(this.data);
    const out = new Value(e, [this], "exp");
    out._backward = () => {
      this.grad += e * out.grad;
    };
    return out;
  }

  pow(k: number): Value {
    const out = new Value(this.data ** k, [this], "**" + k);
    out._backward = () => {
      this.grad += k * this.data ** (k - 1) * out.grad;
    };
    return out;
  }

  relu(): Value {
    const out = new Value(this.data > 0 ? this.data : 0, [this], "relu");
    out._backward = () => {
      this.grad += (out.data > 0 ? 1 : 0) * out.grad;
    };
    return out;
  }

  neg(): Value {
    return this.mul(-1);
  }

  sub(other: Value | number): Value {
    return this.add(Value.lift(other).neg());
  }

  div(other: Value | number): Value {
    return this.mul(Value.lift(other).pow(-1));
  }

  backward(): void {
    // Order the graph so that every node comes after all of its inputs ...
    const order: Value[] = [];
    const seen = new Set<Value>();
    const visit = (node: Value): void => {
      if (seen.has(node)) return;
      seen.add(node);
      for (const child of node._prev) visit(child);
      order.push(node);
    };
    visit(this);
    // ... then walk it from the output back: each node has all of its gradient before it sends it on.
    this.grad = 1;
    for (let i = order.length - 1; i >= 0; i--) order[i]._backward();
  }
}

class Neuron {
  // tanh(w . x + b), or w . x + b for a neuron of the last layer.
  w: Value[];
  b: Value;
  squash: boolean;

  constructor(nin: number, squash = true) {
    this.w = Array.from({ length: nin }, () => new Value(Math.random() * 2 - 1));
    this.b = new Value(0);
    this.squash = squash;
  }

  forward(x: (Value | number)[]): Value {
    let total = this.b;
    this.w.forEach((wi, i) => {
      total = total.add(wi.mul(x[i]));
    });
    return this.squash ? total.tanh() : total;
  }

  parameters(): Value[] {
    return [...this.w, this.b];
  }
}

class Layer {
  // Neurons that all read the same inputs; the layer's output is the list of theirs.
  neurons: Neuron[];

  constructor(nin: number, nout: number, squash = true) {
    this.neurons = Array.from({ length: nout }, () => new Neuron(nin, squash));
  }

  forward(x: (Value | number)[]): Value[] {
    return this.neurons.map((neuron) => neuron.forward(x));
  }

  parameters(): Value[] {
    return this.neurons.flatMap((neuron) => neuron.parameters());
  }
}

export class MLP {
  // Layers one after another: tanh in every layer but the last, which stays linear.
  layers: Layer[];

  constructor(nin: number, nouts: number[]) {
    const sizes = [nin, ...nouts];
    this.layers = nouts.map((nout, i) => new Layer(sizes[i], nout, i !== nouts.length - 1));
  }

  forward(x: (Value | number)[]): Value[] {
    let out: (Value | number)[] = x;
    for (const layer of this.layers) out = layer.forward(out);
    return out as Value[];
  }

  parameters(): Value[] {
    return this.layers.flatMap((layer) => layer.parameters());
  }
}
