/** `call`'s promise, with a synchronous throw as its rejection: a store that throws where its
 *  interface promises a promise fails the call, as a rejection would, not the caller. */
export function promiseOf<T>(call: () => Promise<T>): Promise<T> {
  try {
    return call();
  } catch (error) {
    return Promise.reject(error);
  }
}
