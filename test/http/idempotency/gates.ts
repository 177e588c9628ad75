// Stopping a request at a chosen point of its write, to make another arrive meanwhile or to make
// it fail there: gates on AppOptions.failpoint and on the payment processor's charge.
import type { Failpoint, FailpointName } from '../../../src/core/failpoints.ts';
import type { PaymentProcessor } from '../../../src/payments/processor.ts';
import { createSimulatedProcessor } from '../../../src/payments/simulator.ts';

export interface Gate {
  /** Resolves when a request arrives at the gate. */
  reached: Promise<void>;
  /** Lets the waiting request go on. */
  release(): void;
  /** Called by the request: signals its arrival, then waits for release(). */
  pass(): Promise<void>;
}

export function createGate(): Gate {
  let release!: () => void;
  let signalReached!: () => void;
  const opened = new Promise<void>((resolve) => (release = resolve));
  const reached = new Promise<void>((resolve) => (signalReached = resolve));
  return {
    reached,
    release,
    pass: () => {
      signalReached();
      return opened;
    },
  };
}

/** The simulator, except that the next charge's confirmation can be held (between phase 1 and phase 3). */
export function createHoldableProcessor(): { processor: PaymentProcessor; holdNextCharge(): Gate } {
  const simulator = createSimulatedProcessor();
  let next: Gate | undefined;
  return {
    processor: {
      ...simulator,
      async confirmCharge(charge) {
        const gate = next;
        next = undefined;
        await gate?.pass();
        return simulator.confirmCharge(charge);
      },
    },
    holdNextCharge: () => (next = createGate()),
  };
}

/** An AppOptions.failpoint that a test arms for the one request it means to break or hold. */
export function createFailpoints(): {
  failpoint: Failpoint;
  /** Every point passed since the last clear, in order. */
  reached: FailpointName[];
  throwOnceAt(point: FailpointName): void;
  holdOnceAt(point: FailpointName): Gate;
} {
  let armed: Failpoint | undefined;
  const reached: FailpointName[] = [];
  return {
    reached,
    failpoint(name) {
      reached.push(name);
      return armed?.(name);
    },
    throwOnceAt(point) {
      armed = (name) => {
        if (name !== point) return;
        armed = undefined;
        throw new Error(`failpoint ${point}`);
      };
    },
    holdOnceAt(point) {
      const gate = createGate();
      armed = (name) => {
        if (name !== point) return;
        armed = undefined;
        return gate.pass();
      };
      return gate;
    },
  };
}
