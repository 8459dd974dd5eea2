import { IsDefined, IsIn, IsNotEmpty, IsObject, IsString, MaxLength } from 'class-validator';
import { PROJECT_TYPES, type ProjectType } from '../platform/store/project.entity.js';

const NAME_LENGTH = 200;

export class CreateProjectBody {
  @IsDefined({ message: 'name is required' }) @IsString() @IsNotEmpty() @MaxLength(NAME_LENGTH) name!: string;
  @IsDefined({ message: 'type is required' })
  @IsIn(PROJECT_TYPES, { message: `type must be one of: ${PROJECT_TYPES.join(', ')}` })
  type!: ProjectType;
}

export class SaveDefinitionBody {
  @IsDefined({ message: 'definition is required' }) @IsObject() definition!: Record<string, unknown>;
}
