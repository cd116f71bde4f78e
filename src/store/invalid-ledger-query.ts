/** A query the ledger store cannot run as given (a cursor it did not issue), naming the parameter. */
export class InvalidLedgerQuery extends Error {
  readonly param: string;
  constructor(message: string, param: string) {
    super(message);
    this.param = param;
  }
}
