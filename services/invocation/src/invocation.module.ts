import { Module } from '@nestjs/common';
import { GatewayCopiesProjector } from './events/gateway-copies.projector.js';
import { GetInvocationHandler } from './queries/get-invocation.handler.js';

/** Accepts and records runs, executes definitions, answers invocation queries. */
@Module({
  controllers: [GatewayCopiesProjector, GetInvocationHandler],
})
export class InvocationModule {}
