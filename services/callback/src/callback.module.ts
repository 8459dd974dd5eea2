import { Module } from '@nestjs/common';

/** Signs and delivers run-finished callbacks and records every attempt. */
@Module({})
export class CallbackModule {}
