// Time, injected: expiry and rate-limit windows are judged by a Clock, so tests set the time
// instead of sleeping.
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();
