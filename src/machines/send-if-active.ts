/** Sends `event` unless the actor has ended: an answer that comes after it (a late handler
 *  result, a store call's answer after stop) is dropped, not sent to a stopped actor. */
export function sendIfActive<E>(self: { send(event: E): void; getSnapshot(): { status: string } }, event: E): void {
  if (self.getSnapshot().status === 'active') self.send(event);
}
