// ---------------------------------------------------------------------------------------------------------
// Run this file on its own (node FILE): it draws the two moons, trains your network on them with your
// train(), and says how the loss fell and how many points your network then puts on the right side.

function seeded(seed) {
  // A small seeded generator of numbers in [0, 1), so that every run draws the same moons.
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function twoMoons(n, noise, seed) {
  // n points on two interleaved half circles, labels -1 (upper) and +1 (lower), with Gaussian noise.
  const random = seeded(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const half = Math.floor(n / 2);
  const examples = [];
  for (let i = 0; i < half; i++) {
    const t = (Math.PI * i) / Math.max(half - 1, 1);
    examples.push([[Math.cos(t), Math.sin(t)], -1]);
  }
  for (let i = 0; i < n - half; i++) {
    const t = (Math.PI * i) / Math.max(n - half - 1, 1);
    examples.push([[1 - Math.cos(t), 0.5 - Math.sin(t)], 1]);
  }
  for (let i = examples.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [examples[i], examples[j]] = [examples[j], examples[i]];
  }
  const points = examples.map(([[x, y]]) => [x + noise * gauss(), y + noise * gauss()]);
  return [points, examples.map(([, label]) => label)];
}

const [points, labels] = twoMoons(40, 0.1, 2);
const model = new MLP(2, [8, 1]);
const losses = train(model, points, labels, 60, 0.3);
const right = points.filter((x, i) => (model.forward(x)[0].data > 0 ? 1 : -1) === labels[i]).length;
console.log(`loss ${losses[0].toFixed(4)} at step 1, ${losses[losses.length - 1].toFixed(4)} at step ${losses.length}`);
console.log(`${right} of ${points.length} points on the right side of your network's boundary`);
