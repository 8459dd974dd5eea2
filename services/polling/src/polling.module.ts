import { Module } from '@nestjs/common';

/** Polls customer endpoints on their interval, dedupes items and hands them to invocation. */
@Module({})
export class PollingModule {}
