import { Module } from '@nestjs/common';

/** Records failures, lists them and replays each at most once. */
@Module({})
export class DeadLetterModule {}
